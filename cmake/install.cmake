# `cmake --install build --prefix P`: the headers, the static libraries, the `pecheck` CLI and a
# CMake package, so that a downstream project writes
#   find_package(pecheck 0.1 REQUIRED)
#   target_link_libraries(my_tests PRIVATE pecheck::gtest)   # or pecheck::properties, ::reference
# Headers keep their in-tree paths under include/pecheck ("interface/encoder.hpp", "downstream/gtest.hpp").
# pecheck::gtest links the theorems, the harness, the interface and the reference, never pecheck's
# own kernels (pecheck::impl, installed apart, with CUDA when it was built).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PECHECK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pecheck)

if(PECHECK_HAVE_CUDA)
  set(PECHECK_CUDA_TARGET pecheck_cuda)
endif()
install(TARGETS pecheck_spec pecheck_interface pecheck_reference pecheck_harness pecheck_properties pecheck_gtest
        pecheck_impl ${PECHECK_CUDA_TARGET}
        EXPORT pecheckTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pecheck)
install(TARGETS pecheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir spec interface reference harness impl properties downstream)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pecheck
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
# The plugin ABI is plain C: include/pecheck/encoder_abi.h, found with -I<prefix>/include.
install(FILES ${PROJECT_SOURCE_DIR}/plugin/include/pecheck/encoder_abi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pecheck)
install(EXPORT pecheckTargets NAMESPACE pecheck:: DESTINATION ${PECHECK_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pecheckConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pecheckConfig.cmake INSTALL_DESTINATION ${PECHECK_CMAKE_DIR})
# 0.x: a minor version may break the interface, so 0.1 accepts 0.1.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pecheckConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pecheckConfig.cmake ${PROJECT_BINARY_DIR}/pecheckConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindMPFR.cmake
        DESTINATION ${PECHECK_CMAKE_DIR})
