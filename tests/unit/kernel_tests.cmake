# The CPU kernels' tests. They link the kernels alone (tessera_kernels_cpu), so that a
# build of the kernels by themselves (TESSERA_KERNELS_ONLY: a cross build for another
# architecture, run under an emulator; scripts/cross-check.sh) runs them as well.
function(tessera_add_kernel_test name)
  add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE tessera_kernels_cpu PkgConfig::CMOCKA tessera_flags)
  # shared test headers (lbm_test_field.h)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../support)
  tessera_sanitizer_support(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit ENVIRONMENT "${TESSERA_MPI_ENV}"
                       TIMEOUT 120)
endfunction()

tessera_add_kernel_test(test_lbm_kernels)
# The 16-bit storage formats: every code, the rounding, every level's vector code
tessera_add_kernel_test(test_store16)
# The MRT and Smagorinsky collisions: bases, rates, conservation, MRT = SRT at one rate
tessera_add_kernel_test(test_lbm_collisions)
# The kernel tests again at every CPU level of the build (TESSERA_CPU_LEVEL; exit 77 =
# skipped where the CPU lacks the level); not in sanitizer builds, where test_cpu_level
# runs every level's kernels under the sanitizers already
if(TESSERA_SANITIZE)
  set(levels "")
else()
  set(levels ${TESSERA_CPU_LEVELS})
endif()
foreach(level ${levels})
  set(name ${TESSERA_CPU_LEVEL_${level}_NAME})
  add_test(NAME test_lbm_kernels_${name} COMMAND test_lbm_kernels)
  set_tests_properties(test_lbm_kernels_${name} PROPERTIES LABELS unit SKIP_RETURN_CODE 77
                       ENVIRONMENT "${TESSERA_MPI_ENV};TESSERA_CPU_LEVEL=${name}" TIMEOUT 120)
endforeach()
# The dispatch, the override and the levels' bitwise agreement
tessera_add_kernel_test(test_cpu_level)
