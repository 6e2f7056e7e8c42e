# Found instead of Debian's rapidcheckConfig.cmake when pecheck is built for the Python module:
# python/CMakeLists.txt has already defined `rapidcheck` as the shared-object-safe copy of the
# archive, which pecheck's libraries then link.
if(NOT TARGET rapidcheck)
  message(FATAL_ERROR "python/cmake/rapidcheckConfig.cmake: the rapidcheck target must be defined first")
endif()
set(rapidcheck_FOUND TRUE)
