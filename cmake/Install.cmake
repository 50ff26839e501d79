# What `cmake --install` puts beside the binary (userspace/CMakeLists.txt installs that):
# the systemd unit, bash completion, the example config, the Grafana dashboard and the
# operator's docs (levee(8) points to them).
#
# The unit names absolute paths, fixed when the build is configured: choose the prefix
# with -DCMAKE_INSTALL_PREFIX (/usr puts the config under /etc) and stage with DESTDIR,
# not `cmake --install --prefix`.

# Where this system's systemd looks for units; overridable for packaging.
pkg_get_variable(_systemd_unit_dir systemd systemdsystemunitdir)
if(NOT _systemd_unit_dir)
  set(_systemd_unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(LEVEE_SYSTEMD_UNIT_DIR ${_systemd_unit_dir} CACHE PATH "Where levee@.service is installed")

# FULL: with the prefix /usr, GNUInstallDirs puts the config under /etc, not /usr/etc.
set(SBINDIR ${CMAKE_INSTALL_FULL_SBINDIR})
set(SYSCONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR})
configure_file(dist/systemd/levee@.service ${PROJECT_BINARY_DIR}/dist/levee@.service @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dist/levee@.service DESTINATION ${LEVEE_SYSTEMD_UNIT_DIR})

install(FILES dist/bash-completion/levee DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

install(FILES examples/levee.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/levee/examples)
# The docs an operator reads (not those for developers), in docs/ beside examples/ as in
# the source tree, so that their links to each other and to the example config hold.
set(LEVEE_OPERATOR_DOCS docs/CLI.md docs/JSON.md docs/CONFIG.md docs/OPERATING.md docs/LIMITS.md)
install(FILES ${LEVEE_OPERATOR_DOCS} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/levee/docs)
install(FILES examples/grafana/levee.json DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/levee/examples/grafana)
# Beside the configs the unit reads (SYSCONFDIR/levee/IFACE.toml), never over one.
install(FILES examples/levee.toml DESTINATION ${SYSCONFDIR}/levee RENAME levee.toml.example)
include(cmake/Manpage.cmake)
