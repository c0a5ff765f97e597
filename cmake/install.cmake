# `cmake --install build [--prefix P]` puts in place: bin/posenc, include/posenc.h,
# lib/libposenc.a, lib/libposenc.so (soname libposenc.so.MAJOR.MINOR),
# lib/pkgconfig/posenc.pc and lib/cmake/posenc/ (find_package(posenc) ->
# posenc::posenc (shared) and posenc::posenc_static). Both descriptions are
# relocatable: the .pc file finds its prefix from its own folder (${pcfiledir}),
# the CMake files from theirs, so --prefix at install time is honoured.
include(CMakePackageConfigHelpers)

set_target_properties(posenc_shared PROPERTIES EXPORT_NAME posenc)
set_target_properties(posenc_static PROPERTIES EXPORT_NAME posenc_static)
install(TARGETS posenc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS posenc_shared posenc_static EXPORT posencTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/posenc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(POSENC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/posenc)
install(EXPORT posencTargets NAMESPACE posenc:: DESTINATION ${POSENC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/posencConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/posencConfig.cmake INSTALL_DESTINATION ${POSENC_CMAKE_DIR})
# Before 1.0 a minor release may change the ABI, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/posencConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/posencConfig.cmake ${PROJECT_BINARY_DIR}/posencConfigVersion.cmake
        DESTINATION ${POSENC_CMAKE_DIR})

# pkg-config: ${pcfiledir} is the folder holding posenc.pc (LIBDIR/pkgconfig).
file(RELATIVE_PATH POSENC_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" POSENC_PC_TO_PREFIX "${POSENC_PC_TO_PREFIX}")
file(RELATIVE_PATH POSENC_PC_TO_LIBDIR /root /root/${CMAKE_INSTALL_LIBDIR})
file(RELATIVE_PATH POSENC_PC_TO_INCLUDEDIR /root /root/${CMAKE_INSTALL_INCLUDEDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/posenc.pc.in ${PROJECT_BINARY_DIR}/posenc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/posenc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
