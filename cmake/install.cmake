# `cmake --install build --prefix P`: the headers, the static library, the CLI, a CMake package
# (find_package(onefit) gives onefit::onefit, carrying every link dependency, private ones
# included, so a consumer names none of them) and a pkg-config file (pkg-config --static).
include(CMakePackageConfigHelpers)
set(ONEFIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onefit)

install(TARGETS onefit EXPORT onefitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS onefit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/onefit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT onefitTargets NAMESPACE onefit:: DESTINATION ${ONEFIT_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/onefitConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/onefitConfig.cmake INSTALL_DESTINATION ${ONEFIT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/onefitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/onefitConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/onefitConfigVersion.cmake
        DESTINATION ${ONEFIT_CMAKE_DIR})

# pkg-config: the static library's own dependencies go in Libs.private.
set(ONEFIT_PC_PRIVATE "${XSMM_LIBRARY} ${XSMM_NOBLAS_LIBRARY} -ldl -pthread")
if(ONEFIT_KERAS_FILES)
  string(APPEND ONEFIT_PC_PRIVATE " ${HDF5_C_LIBRARY} ${ZIP_LIBRARY}")
endif()
if(ONEFIT_ONNX)
  string(APPEND ONEFIT_PC_PRIVATE " -lonnx -lonnx_proto -lprotobuf")
endif()
if(ONEFIT_HAVE_CUDA)
  string(APPEND ONEFIT_PC_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt")
endif()
# Relocatable: the prefix is found from the .pc file's own folder.
file(RELATIVE_PATH ONEFIT_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${CMAKE_CURRENT_LIST_DIR}/onefit.pc.in ${CMAKE_CURRENT_BINARY_DIR}/onefit.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/onefit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
