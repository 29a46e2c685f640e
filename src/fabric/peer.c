/* Whether a peer process on this host is still there: the shared-memory and
 * libfabric channels ask it while they wait, so a rank killed with SIGKILL
 * (whose sockets would tell, but whose shared memory does not) is an error
 * naming it within one poll, not a timeout. */
#include <stdio.h>
#include <string.h>

#include "chan_int.h"

bool tp__fabric_pid_gone(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return !p || p[1] == 0 || p[2] == 'Z' || p[2] == 'X';
}
