# Compiler flags shared by every ember target.
set(EMBER_USE_NATIVE OFF)
if(EMBER_NATIVE)
  if(CMAKE_CROSSCOMPILING)
    message(STATUS "ember: EMBER_NATIVE ignored when cross-compiling")
  elseif(DEFINED ENV{SOURCE_DATE_EPOCH})
    message(STATUS "ember: EMBER_NATIVE ignored for reproducible builds (SOURCE_DATE_EPOCH is set)")
  else()
    set(EMBER_USE_NATIVE ON)
  endif()
endif()

function(ember_apply_flags target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    # C++ flags for C++ sources; CUDA sources (EMBER_CUDA) pass the host-code ones to the host
    # compiler through nvcc's -Xcompiler.
    set(cxx "$<COMPILE_LANGUAGE:CXX>")
    set(cu "$<COMPILE_LANGUAGE:CUDA>")
    target_compile_options(${target} PRIVATE $<${cxx}:-Wall> $<${cxx}:-Wextra>
                                             $<${cu}:-Xcompiler=-Wall,-Wextra>)
    if(EMBER_WERROR)
      target_compile_options(${target} PRIVATE $<${cxx}:-Werror> $<${cu}:-Xcompiler=-Werror>
                                               $<${cu}:--Werror=all-warnings>)
    endif()
    # Reproducible: no absolute source paths in __FILE__ or debug info.
    target_compile_options(${target} PRIVATE
      "$<${cxx}:-ffile-prefix-map=${PROJECT_SOURCE_DIR}=.>"
      "$<${cxx}:-ffile-prefix-map=${PROJECT_BINARY_DIR}=build>"
      "$<${cu}:-Xcompiler=-ffile-prefix-map=${PROJECT_SOURCE_DIR}=.>"
      "$<${cu}:-Xcompiler=-ffile-prefix-map=${PROJECT_BINARY_DIR}=build>")
    if(EMBER_USE_NATIVE)
      target_compile_options(${target} PRIVATE $<${cxx}:-march=native>)
    endif()
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${EMBER_WERROR}>:/WX>)
  endif()
endfunction()
