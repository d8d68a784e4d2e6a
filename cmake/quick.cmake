# `ctest -L quick`: every test but the few that take a minute or more
# (measured in one fresh-clone `.ci/run` on the idle 2-core machine:
# validation/v21 117 s, cli/commands 92 s, validation/bound 84 s,
# starpu/tune-stencil 68 s, cli/noise 50 s, style/clang-format 38 s,
# style/calls 34 s; the suite's 448 s of wall clock with -j2). mapopt_label_quick() adds the
# label to the tests of the directory that calls it, at its end (CMake 3.25
# sets test properties only from the directory that declared the test).
set(MAPOPT_SLOW_TESTS validation/v21 validation/bound cli/commands
    starpu/tune-stencil cli/noise style/clang-format style/calls)

function(mapopt_label_quick)
  get_property(dir_tests DIRECTORY PROPERTY TESTS)
  foreach(t ${dir_tests})
    if(NOT t IN_LIST MAPOPT_SLOW_TESTS)
      set_property(TEST ${t} APPEND PROPERTY LABELS quick)
    endif()
  endforeach()
endfunction()
