# The Debian package: `cmake --build build --target package` (or `cpack -G DEB` in the
# build directory) makes levee_VERSION-REVISION_ARCH.deb in the build directory from what
# cmake/Install.cmake installs, plus what only the package has (component "debian"): its
# copyright file, its changelog and the maintainer scripts of dist/debian/.
#
# Made from a build configured with -DCMAKE_INSTALL_PREFIX=/usr only: the unit names the
# binary and the config by the absolute paths fixed at configure time, so cpack refuses
# another prefix rather than package a unit that runs /usr/local/sbin/levee.
# tests/install/package_test.sh builds, installs, removes and lints it.

# The revision is the latest entry of dist/debian/changelog; the package test checks
# that the entry's upstream version is the project's.
file(STRINGS ${PROJECT_SOURCE_DIR}/dist/debian/changelog _changelog_top LIMIT_COUNT 1)
if(NOT _changelog_top MATCHES "^levee \\(([^)]+)-([^)-]+)\\) ")
  message(FATAL_ERROR "dist/debian/changelog: the first line is not 'levee (VERSION-REVISION) ...'")
endif()
set(LEVEE_DEB_REVISION ${CMAKE_MATCH_2})
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(WARNING "dist/debian/changelog's latest entry is for ${CMAKE_MATCH_1}, the project is "
                  "${PROJECT_VERSION}: add an entry for it before packaging")
endif()

# Debian wants the changelog and the copyright under /usr/share/doc/PACKAGE, the changelog
# gzip-compressed (-n: no name or time stamp, so a rebuild makes the same bytes). Only
# the package installs them (EXCLUDE_FROM_ALL): a plain `cmake --install` is no Debian
# package.
set(_deb_dir ${PROJECT_BINARY_DIR}/debian)
add_custom_command(
  OUTPUT ${_deb_dir}/changelog.Debian.gz
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/dist/debian/changelog ${_deb_dir}/changelog.Debian
  COMMAND gzip -9nf ${_deb_dir}/changelog.Debian
  DEPENDS ${PROJECT_SOURCE_DIR}/dist/debian/changelog
  VERBATIM)
add_custom_target(levee_deb_changelog ALL DEPENDS ${_deb_dir}/changelog.Debian.gz)
install(FILES ${_deb_dir}/changelog.Debian.gz dist/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/levee COMPONENT debian EXCLUDE_FROM_ALL)

# dpkg keeps an operator's edit of a conffile across upgrades and leaves it on removal
# (only purge deletes it): every file the package puts under /etc.
file(WRITE ${_deb_dir}/conffiles "${CMAKE_INSTALL_FULL_SYSCONFDIR}/levee/levee.toml.example\n")

# Checked when cpack runs (the prefix of the build it packages), not at configure time:
# a build for `cmake --install` to /usr/local is fine until someone packages it.
file(CONFIGURE OUTPUT ${_deb_dir}/cpack-check.cmake CONTENT [[
if(NOT "@CMAKE_INSTALL_PREFIX@" STREQUAL "/usr")
  message(FATAL_ERROR "the package is made from a build configured with -DCMAKE_INSTALL_PREFIX=/usr, "
                      "not @CMAKE_INSTALL_PREFIX@: configure @PROJECT_BINARY_DIR@ again with it")
endif()
]] @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${_deb_dir}/cpack-check.cmake)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME levee)
set(CPACK_PACKAGE_VENDOR "levee maintainers")
set(CPACK_PACKAGE_CONTACT "levee maintainers <maintainers@users.noreply.a-seed-4899108c.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "XDP flood filter: per-source rate limits at the NIC driver")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION [[
levee drops floods at the network driver. An XDP program keeps a token
bucket for every source address (IPv4 and IPv6) and drops what exceeds its
limit before the kernel allocates anything for the packet; limits are per
traffic class (DNS, SYNs, ICMP, the rest), with allow, deny and override
lists, and an autopilot that refuses the excess of new sources in a flood of
spoofed ones.

The levee command attaches the filter, changes its limits live and reads its
counters; levee@IFACE.service keeps an interface's filter under systemd with
Prometheus metrics and an event log.]])
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${LEVEE_DEB_REVISION})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The libraries from what the binary links (dpkg-shlibdeps); procps for /bin/kill, the
# unit's ExecReload.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS procps)
# The binary carries its debug information (RelWithDebInfo): tens of MB the package
# does not need. cpack strips it; the compiler's .comment and the .note sections go too,
# as debhelper's dh_strip removes them (the build id is in .note.gnu.build-id, kept).
set(CPACK_STRIP_FILES ON)
install(CODE "execute_process(COMMAND ${CMAKE_STRIP} --remove-section=.comment --remove-section=.note
                              \$ENV{DESTDIR}${CMAKE_INSTALL_FULL_SBINDIR}/levee COMMAND_ERROR_IS_FATAL ANY)"
        COMPONENT debian EXCLUDE_FROM_ALL)
# Stage with DESTDIR: the unit's directory and /etc/levee are absolute destinations,
# which would otherwise be written to this system.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
# The product's files and the package's own, in one package.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL ${CMAKE_INSTALL_DEFAULT_COMPONENT_NAME} debian)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${_deb_dir}/conffiles ${PROJECT_SOURCE_DIR}/dist/debian/postinst
                                       ${PROJECT_SOURCE_DIR}/dist/debian/prerm ${PROJECT_SOURCE_DIR}/dist/debian/postrm)
# 0755 for the scripts, 0644 for conffiles, whatever their mode in the tree.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# include(CPack) also makes package_source, a tarball of the source directory: without
# the build directories (gigabytes) and git's (a directory, or a worktree's file).
set(CPACK_SOURCE_GENERATOR TXZ)
# Written to CPackConfig.cmake as set here (the regular expressions' backslashes too).
set(CPACK_VERBATIM_VARIABLES ON)
set(CPACK_SOURCE_IGNORE_FILES "/\\.git/" "/\\.git$" "/build[^/]*/")
include(CPack)
