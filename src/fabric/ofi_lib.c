/* libfabric, loaded when a libfabric transport or channel is first used
 * (declared in ofi_int.h). Debian's libfabric.so.1 links the psm, psm2, efa
 * and verbs providers' libraries. libinfinipath's constructor, run at
 * load, pins the main thread to one CPU and times the TSC against
 * gettimeofday in usleep(125) steps, about 0.2 s, and the library installs
 * its own SIGSEGV handler: linked, every trainpath process paid that at
 * start-up, whatever it ran (docs/reliability.md, "The start-up crash
 * under srun"). Loaded here, only a process that asks for an ofi transport
 * or channel does. libfabric's API is mostly inline calls
 * through the fids' operation tables; these seven are its exported
 * functions that src/fabric calls, resolved once with dlsym. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>

#include "ofi_int.h"

/* The real names: ofi_int.h maps fi_getinfo and the others onto the
 * functions below for the files that include it. */
#undef fi_getinfo
#undef fi_freeinfo
#undef fi_dupinfo
#undef fi_fabric
#undef fi_version
#undef fi_strerror
#undef fi_tostr

#define TP__OFI_SONAME "libfabric.so.1"

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    uint32_t (*version)(void);
    const char *(*strerror)(int);
    char *(*tostr)(const void *, enum fi_type);
    char why[256]; /* why it could not be loaded; "" when it was */
} lib;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

/* What a library's constructors may change in the whole process, as it was
 * before the load: every signal's action and this thread's CPUs.
 * libinfinipath's constructor installs its own handler for SIGINT, SIGTERM,
 * SIGSEGV, SIGBUS, SIGILL and SIGABRT (which prints a backtrace and exits 1:
 * an interrupted run would leave no document and the wrong status), and
 * pins the thread to one CPU while it times the TSC. Linked, it ran before
 * main; loaded here, after trainpath installed its own, so the process's
 * are put back. */
struct proc_state {
    struct sigaction act[NSIG];
    bool have[NSIG];
    cpu_set_t cpus;
    bool have_cpus;
};

static void state_save(struct proc_state *st)
{
    for (int sig = 1; sig < NSIG; sig++)
        st->have[sig] = sigaction(sig, NULL, &st->act[sig]) == 0;
    st->have_cpus = sched_getaffinity(0, sizeof st->cpus, &st->cpus) == 0;
}

static void state_restore(const struct proc_state *st)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction now;
        if (st->have[sig] && sigaction(sig, NULL, &now) == 0 &&
            (now.sa_handler != st->act[sig].sa_handler || now.sa_flags != st->act[sig].sa_flags))
            sigaction(sig, &st->act[sig], NULL);
    }
    if (st->have_cpus)
        sched_setaffinity(0, sizeof st->cpus, &st->cpus);
}

static void load(void)
{
    static struct proc_state before; /* NSIG actions: not on a thread's stack */
    state_save(&before);
    void *h = dlopen(TP__OFI_SONAME, RTLD_NOW | RTLD_GLOBAL);
    state_restore(&before);
    if (!h) {
        snprintf(lib.why, sizeof lib.why, "%s", dlerror());
        return;
    }
    *(void **)&lib.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&lib.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&lib.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&lib.fabric = dlsym(h, "fi_fabric");
    *(void **)&lib.version = dlsym(h, "fi_version");
    *(void **)&lib.strerror = dlsym(h, "fi_strerror");
    *(void **)&lib.tostr = dlsym(h, "fi_tostr");
    if (!lib.getinfo || !lib.freeinfo || !lib.dupinfo || !lib.fabric || !lib.version ||
        !lib.strerror || !lib.tostr) {
        snprintf(lib.why, sizeof lib.why,
                 "%s lacks one of fi_getinfo, fi_freeinfo, fi_dupinfo, "
                 "fi_fabric, fi_version, fi_strerror, fi_tostr",
                 TP__OFI_SONAME);
        lib.getinfo = NULL;
    }
}

/* Whether the library is there; the first call loads it. */
static bool loaded(void)
{
    pthread_once(&lib_once, load);
    return lib.getinfo != NULL;
}

int tp__fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info)
{
    if (!loaded()) {
        *info = NULL;
        return -FI_ENOSYS;
    }
    return lib.getinfo(version, node, service, flags, hints, info);
}

void tp__fi_freeinfo(struct fi_info *info)
{
    if (info && loaded())
        lib.freeinfo(info);
}

struct fi_info *tp__fi_dupinfo(const struct fi_info *info)
{
    return loaded() ? lib.dupinfo(info) : NULL;
}

int tp__fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return loaded() ? lib.fabric(attr, fabric, context) : -FI_ENOSYS;
}

uint32_t tp__fi_version(void)
{
    return loaded() ? lib.version() : 0;
}

const char *tp__fi_strerror(int errnum)
{
    static char text[320];
    if (loaded())
        return lib.strerror(errnum);
    /* every call failed for this one reason */
    snprintf(text, sizeof text, "libfabric could not be loaded: %s", lib.why);
    return text;
}

char *tp__fi_tostr(const void *data, enum fi_type datatype)
{
    return loaded() ? lib.tostr(data, datatype) : NULL;
}
