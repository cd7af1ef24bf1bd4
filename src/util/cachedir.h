/* SPDX-License-Identifier: MIT */
/*
 * cachedir.h - perfport's cache directory: files it can make again from
 * their sources (parsed kallsyms, uncompressed debug files), kept between
 * runs in $XDG_CACHE_HOME/perfport (default ~/.cache/perfport). Safe to
 * delete at any time.
 */
#ifndef UTIL_CACHEDIR_H
#define UTIL_CACHEDIR_H

#include <stdbool.h>
#include <stddef.h>

/**
 * cache_dir() - the path of perfport's cache directory, or of @sub inside it
 * (NULL: the directory itself), into @out.
 * @make: create the directories (mode 0700) when they are missing.
 * Return: false when there is none (no $XDG_CACHE_HOME nor $HOME), the path
 * does not fit, or it cannot be made.
 */
bool cache_dir(char *out, size_t size, const char *sub, bool make);

/**
 * cache_write() - write all @n bytes at @p to @fd (a cache file being made).
 * Return: false on any error (the caller drops the file).
 */
bool cache_write(int fd, const void *p, size_t n);

#endif /* UTIL_CACHEDIR_H */
