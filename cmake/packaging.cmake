# What `cmake --install` and the Debian package (`make package`, CPack)
# install: the daemon set (component server) — weir-server, weir-ctl,
# weir-bench in bin/; the systemd unit; /etc/weir/weir.yaml with production
# paths; the man pages; the README and docs/. The client library and its
# CMake package (component client) are installed by `cmake --install` too,
# and left out of the Debian package.
include(GNUInstallDirs)

install(TARGETS weir-server weir-ctl weir-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)

# The unit names the binaries where this install puts them (the prefix is
# known only at install time: CPack installs under /usr).
install(CODE "
  set(WEIR_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  set(WEIR_DOCDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/doc/weir\")
  configure_file(\"${CMAKE_SOURCE_DIR}/packaging/weir.service.in\" \"${CMAKE_BINARY_DIR}/packaging/weir.service\" @ONLY)
" COMPONENT server)
install(FILES ${CMAKE_BINARY_DIR}/packaging/weir.service DESTINATION lib/systemd/system COMPONENT server)
# The configuration is the system's, wherever the programs go (also with
# `cmake --install`; DESTDIR applies). The client library alone:
# `cmake --install build --component client --prefix P`.
install(FILES packaging/weir.yaml DESTINATION /etc/weir COMPONENT server)
install(FILES packaging/man/weir-server.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT server)
install(FILES packaging/man/weir-ctl.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT server)
install(FILES README.md packaging/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/weir COMPONENT server)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/weir/docs COMPONENT server
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weir)
set(CPACK_PACKAGE_VENDOR "weir")
set(CPACK_PACKAGE_CONTACT "weir maintainers <weir@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "durable write-ahead buffer daemon in front of a database or endpoint")
set(CPACK_PACKAGE_DESCRIPTION
    "Applications push records to a local socket and get an ack in microseconds; weir appends each to a
CRC-checked write-ahead buffer and delivers it in large batches to SQLite, PostgreSQL, MariaDB/MySQL,
ClickHouse, an HTTP endpoint or a file. Every acked record reaches every sink at least once.")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_NAME weir)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dependencies computed from the binaries (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_SOURCE_DIR}/packaging/debian/conffiles;${CMAKE_SOURCE_DIR}/packaging/debian/postinst;${CMAKE_SOURCE_DIR}/packaging/debian/prerm;${CMAKE_SOURCE_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/package)
include(CPack)
