/* The version of trainpath: meson's project version, and on a development
 * build the commit it was made from (scripts/version.sh; docs/install.md,
 * "The version"). One function, so that a new commit recompiles one file. */
#ifndef TP_VERSION_H
#define TP_VERSION_H

/* The version this binary was built from, e.g. "0.1.0" (a release) or
 * "0.1.0+git.344.g84c7e65.dirty" (a development build). Static storage;
 * never NULL. */
const char *tp_version(void);

#endif
