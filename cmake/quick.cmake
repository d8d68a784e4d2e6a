# `ctest -L quick`: every test but the few that take 40 s or more
# (measured in `ctest -L quick -j2` and one fresh-clone `.ci/run` on the
# idle 2-core machine, 2026-12-02: validation/v21 132 s,
# validation/bound_corpus 99 s, cli/commands 91 s, validation/bound 86 s,
# starpu/tune-stencil 64 s, style/clang-format 55 s, cli/calibrate 44 s,
# cli/noise 37 s, style/calls 38 s). mapopt_label_quick() adds the
# label to the tests of the directory that calls it, at its end (CMake 3.25
# sets test properties only from the directory that declared the test).
set(MAPOPT_SLOW_TESTS validation/v21 validation/bound validation/bound_corpus
    cli/commands cli/calibrate starpu/tune-stencil cli/noise style/clang-format
    style/calls)

function(mapopt_label_quick)
  get_property(dir_tests DIRECTORY PROPERTY TESTS)
  foreach(t ${dir_tests})
    if(NOT t IN_LIST MAPOPT_SLOW_TESTS)
      set_property(TEST ${t} APPEND PROPERTY LABELS quick)
    endif()
  endforeach()
endfunction()
