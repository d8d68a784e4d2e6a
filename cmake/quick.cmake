# `ctest -L quick`: every test but the few that take minutes (measured with
# ctest -j2 on a busy 2-core machine: validation/v21 307 s, validation/bound
# 255 s, cli/commands 188 s, style/clang-format 76 s, style/calls 35 s; the
# rest together about 300 s of one core). mapopt_label_quick() adds the
# label to the tests of the directory that calls it, at its end (CMake 3.25
# sets test properties only from the directory that declared the test).
set(MAPOPT_SLOW_TESTS validation/v21 validation/bound cli/commands
    style/clang-format style/calls)

function(mapopt_label_quick)
  get_property(dir_tests DIRECTORY PROPERTY TESTS)
  foreach(t ${dir_tests})
    if(NOT t IN_LIST MAPOPT_SLOW_TESTS)
      set_property(TEST ${t} APPEND PROPERTY LABELS quick)
    endif()
  endforeach()
endfunction()
