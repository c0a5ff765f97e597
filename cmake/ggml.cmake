# A ggml source checkout built in-tree, for the programs that call ggml's own
# CPU ops in the same process: bench/ggml_rope.c (bench_ggml, issue 29) and
# tests/ggml/ggml_rope_dump.c (the committed ggml fixtures, issue 24).
# -DPOSENC_GGML_DIR=/path/to/ggml (tested with ggml d99724f2 = v0.21.0). Without
# it POSENC_HAVE_GGML is OFF and those targets print how to enable them.
set(POSENC_GGML_DIR "" CACHE PATH "a ggml source checkout (bench_ggml, ggml_fixtures)")
set(POSENC_HAVE_GGML OFF)
if(POSENC_GGML_DIR)
  set(GGML_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(GGML_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
  set(GGML_OPENMP OFF CACHE BOOL "" FORCE)
  set(GGML_NATIVE ON CACHE BOOL "" FORCE)
  # ggml builds with its own warnings, not posenc's -Werror -Wpedantic
  get_directory_property(posenc_options COMPILE_OPTIONS)
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "")
  add_subdirectory(${POSENC_GGML_DIR} ${CMAKE_BINARY_DIR}/ggml EXCLUDE_FROM_ALL SYSTEM)
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${posenc_options}")
  set(POSENC_HAVE_GGML ON)
endif()
set(POSENC_GGML_HINT "configure with -DPOSENC_GGML_DIR=/path/to/ggml (e.g. a clone of https://github.com/ggml-org/ggml at d99724f2)")
