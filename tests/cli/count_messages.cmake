# cmake -DMPIEXEC=... -DTESSERA=... -DPRELOAD=lib.so -DCONFIG=file -DOUT=folder
#       -DSTEPS=N -DPER_STEP=M -P count_messages.cmake
# Runs CONFIG on 2 ranks twice, N and 2 N steps, with the count_sends library preloaded,
# and checks that the N steps more sent exactly N * PER_STEP messages on each rank (the
# start-up and the end of a run, the same in both, cancel out).
foreach(k 1 2)
  math(EXPR steps "${STEPS} * ${k}")
  set(env LD_PRELOAD=${PRELOAD})
  if(DEFINED ENV{ASAN_OPTIONS})
    # the sanitizer runtime is linked into tessera; the preloaded library comes first
    list(APPEND env "ASAN_OPTIONS=$ENV{ASAN_OPTIONS}:verify_asan_link_order=0")
  endif()
  set(xs "")
  foreach(e IN LISTS env)
    list(APPEND xs -x "${e}")
  endforeach()
  execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe ${xs} ${TESSERA} run ${CONFIG}
                          --steps ${steps} --output ${OUT}_${k} --overwrite
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run of ${steps} steps failed (${rc}):\n${out}\n${err}")
  endif()
  foreach(r 0 1)
    if(NOT out MATCHES "count_sends rank ${r}: isend ([0-9]+) send ([0-9]+)")
      message(FATAL_ERROR "no message count of rank ${r} in:\n${out}\n${err}")
    endif()
    math(EXPR n "${CMAKE_MATCH_1} + ${CMAKE_MATCH_2}")
    set(count_${k}_${r} ${n})
  endforeach()
endforeach()
foreach(r 0 1)
  math(EXPR more "${count_2_${r}} - ${count_1_${r}}")
  math(EXPR want "${STEPS} * ${PER_STEP}")
  message(STATUS "rank ${r}: ${count_1_${r}} messages in ${STEPS} steps, ${count_2_${r}} in twice as many: ${more} for ${STEPS} steps")
  if(NOT more EQUAL want)
    message(FATAL_ERROR "rank ${r} sent ${more} messages in ${STEPS} steps, expected ${want} (${PER_STEP} per step)")
  endif()
endforeach()
