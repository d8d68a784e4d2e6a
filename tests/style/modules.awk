# Prints the table "Modules and who may use whom" of docs/architecture.md
# as one line per module: its name, then the comma-separated modules it may
# use (nothing for none). Used by check_layers.sh and check_calls.sh; run
# as awk -F'|' -f modules.awk docs/architecture.md.
/^## Modules and who may use whom/ { on = 1; next }
/^## / { on = 0 }
on && $3 ~ /src\// {
  m = $2; u = $4
  gsub(/[ \t]/, "", m); gsub(/[ \t]/, "", u)
  print m, (u == "-" ? "" : u)
}
