# Writes the manual pages and the bash completion of mapopt, made by the
# program itself from its --help texts (src/cli/help.c):
#   cmake -DMAPOPT=path/to/mapopt -DOUT=dir -P docs.cmake
# gives OUT/man/mapopt.1, OUT/man/mapopt-COMMAND.1 for every command, and
# OUT/mapopt.bash.
file(MAKE_DIRECTORY ${OUT}/man)
execute_process(COMMAND ${MAPOPT} --commands OUTPUT_VARIABLE commands
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MAPOPT} --commands failed")
endif()
string(REGEX REPLACE "\n$" "" commands "${commands}")
string(REPLACE "\n" ";" commands "${commands}")
execute_process(COMMAND ${MAPOPT} --man OUTPUT_FILE ${OUT}/man/mapopt.1
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MAPOPT} --man failed")
endif()
foreach(c ${commands})
  execute_process(COMMAND ${MAPOPT} --man ${c}
                  OUTPUT_FILE ${OUT}/man/mapopt-${c}.1 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${MAPOPT} --man ${c} failed")
  endif()
endforeach()
execute_process(COMMAND ${MAPOPT} --completion bash
                OUTPUT_FILE ${OUT}/mapopt.bash RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MAPOPT} --completion bash failed")
endif()
