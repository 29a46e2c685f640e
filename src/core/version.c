/* tp_version: the one string the build makes (meson's vcs_tag runs
 * scripts/version.sh on every build and rewrites the generated header only
 * when the version changes), kept behind a function so that this is the only
 * file a new commit recompiles. */
#include "tp/version.h"

#include "tp_version_vcs.h"

const char *tp_version(void)
{
    return TP_VCS_VERSION;
}
