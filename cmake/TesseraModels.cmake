# tessera_model_folders(): in the folder it is called from (a layer: sweeps/, kernels_cpu/,
# kernels_gpu/), adds the sub-folder of every model of TESSERA_MODELS that has one with a
# CMakeLists.txt (a model without kernels has no folder in the kernel layers).
function(tessera_model_folders)
  foreach(model ${TESSERA_MODELS})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${model}/CMakeLists.txt)
      add_subdirectory(${model})
    endif()
  endforeach()
endfunction()
