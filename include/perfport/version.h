/* SPDX-License-Identifier: MIT */
/*
 * perfport/version.h - the release this SDK belongs to. The plugin ABI
 * (plugin.h) will carry its own version number.
 */
#ifndef PERFPORT_VERSION_H
#define PERFPORT_VERSION_H

#define PERFPORT_VERSION_MAJOR 0
#define PERFPORT_VERSION_MINOR 1
#define PERFPORT_VERSION_PATCH 0
#define PERFPORT_VERSION "0.1.0"

#endif /* PERFPORT_VERSION_H */
