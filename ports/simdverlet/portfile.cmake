# Overlay port for simdverlet, kept in the library's own repository (ports/simdverlet): it builds
# the checkout it sits in, so `--overlay-ports=<checkout>/ports` installs exactly that version.
# A registry port would fetch a release instead:
#   vcpkg_from_github(OUT_SOURCE_PATH SOURCE_PATH REPO <owner>/simdverlet REF "v${VERSION}" SHA512 <hash>)
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

# Header-only: one configuration is enough, and nothing lands in lib/.
set(VCPKG_BUILD_TYPE release)

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        # Inside vcpkg the project is top level, so switch off what a consumer does not need.
        -DSIMDVERLET_BUILD_TESTS=OFF
        -DSIMDVERLET_BUILD_BENCHMARKS=OFF
        -DSIMDVERLET_BUILD_EXAMPLES=OFF
        -DSIMDVERLET_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/simdverlet)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
