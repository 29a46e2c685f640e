/* The collectives' kinds (include/tp/wlimport.h), one row each, with every
 * name torch, NCCL and RCCL give them: c10d ops ("c10d::_allgather_base_"),
 * record_param_comms' "Collective name" ("allgather_into_tensor_coalesced"),
 * the backends' annotations ("nccl:_reduce_scatter_base", "gloo:all_reduce",
 * "nccl:send 0->1"), NCCL's log lines ("ReduceScatter") and kernels
 * ("ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_AllGather_RING_LL").
 * A name is compared in one normal form: the prefix up to "::" or ":"
 * dropped, then only its letters, lowercase, up to the first space or '('
 * ("nccl:_all_gather_base" -> "allgatherbase"); a kernel's name is its
 * part after ncclKernel_/ncclDevKernel_ up to the next '_'. Also torch's
 * element types, and the nccl-tests size of a call. */
#include <ctype.h>
#include <string.h>

#include "wlimport_int.h"

static const struct {
    const char *name;
    enum tp__wl_shape shape;
    const char *aliases[12]; /* normal forms */
} kinds[TP_WL_NKINDS] = {
    [TP_WL_ALLREDUCE] = {"allreduce",
                         TP__WL_SAME,
                         {"allreduce", "allreducecoalesced", "allreducesparse"}},
    [TP_WL_ALLGATHER] = {"allgather",
                         TP__WL_OUT_N,
                         {"allgather", "allgatherbase", "allgathercoalesced", "allgatherintotensor",
                          "allgatherintotensorcoalesced"}},
    [TP_WL_REDUCE_SCATTER] = {"reduce-scatter",
                              TP__WL_IN_N,
                              {"reducescatter", "reducescatterbase", "reducescattertensor",
                               "reducescattertensorcoalesced"}},
    [TP_WL_ALLTOALL] = {"alltoall",
                        TP__WL_SAME,
                        {"alltoall", "alltoallbase", "alltoallv", "alltoallsingle"}},
    [TP_WL_BROADCAST] = {"broadcast", TP__WL_SAME, {"broadcast", "bcast"}},
    [TP_WL_REDUCE] = {"reduce", TP__WL_SAME, {"reduce"}},
    [TP_WL_SEND] = {"send", TP__WL_SAME, {"send"}},
    [TP_WL_RECV] = {"recv", TP__WL_SAME, {"recv", "recvanysource"}},
    [TP_WL_BARRIER] = {"barrier", TP__WL_SAME, {"barrier"}},
};

const char *tp_wlimport_kind_name(int kind)
{
    return kind >= 0 && kind < TP_WL_NKINDS ? kinds[kind].name : NULL;
}

enum tp__wl_shape tp__wl_kind_shape(int kind)
{
    return kind >= 0 && kind < TP_WL_NKINDS ? kinds[kind].shape : TP__WL_SAME;
}

/* the normal form of s[0..len) into out (cap bytes) */
static void normal(const char *s, size_t len, char *out, size_t cap)
{
    size_t at = 0, k = 0;
    for (size_t i = 0; i + 1 < len; i++) /* after the last "::" or ':' */
        if (s[i] == ':')
            at = i + 1;
    if (len && s[len - 1] == ':')
        at = len;
    for (size_t i = at; i < len && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '(')
            break;
        if (isalpha(c))
            out[k++] = (char)tolower(c);
    }
    out[k] = 0;
}

static int lookup(const char *norm)
{
    for (int k = 0; k < TP_WL_NKINDS; k++)
        for (size_t a = 0;
             a < sizeof kinds[k].aliases / sizeof kinds[k].aliases[0] && kinds[k].aliases[a]; a++)
            if (strcmp(norm, kinds[k].aliases[a]) == 0)
                return k;
    return -1;
}

int tp_wlimport_kind_of(const char *name)
{
    if (!name)
        return -1;
    static const char *const kernel[] = {"ncclKernel_", "ncclDevKernel_", "rcclKernel_"};
    for (size_t i = 0; i < sizeof kernel / sizeof kernel[0]; i++) {
        const char *p = strstr(name, kernel[i]);
        if (p) {
            p += strlen(kernel[i]);
            char norm[32];
            normal(p, strcspn(p, "_("), norm, sizeof norm);
            return lookup(norm); /* Generic, SendRecv: -1 */
        }
    }
    char norm[64];
    normal(name, strlen(name), norm, sizeof norm);
    return lookup(norm);
}

uint64_t tp__wl_size(int kind, uint64_t in_bytes, uint64_t out_bytes, unsigned n)
{
    const uint64_t U = TP_WL_UNSIZED;
    switch (tp__wl_kind_shape(kind)) {
    case TP__WL_OUT_N: /* the output, or n inputs */
        if (out_bytes != U)
            return in_bytes != U && in_bytes > out_bytes ? in_bytes : out_bytes;
        return n && in_bytes != U && in_bytes <= (U - 1) / n ? in_bytes * n : U;
    case TP__WL_IN_N: /* the input, or n outputs */
        if (in_bytes != U)
            return out_bytes != U && out_bytes > in_bytes ? out_bytes : in_bytes;
        return n && out_bytes != U && out_bytes <= (U - 1) / n ? out_bytes * n : U;
    case TP__WL_SAME: break;
    }
    /* the input (an all-to-all's send buffer: its splits may make the
     * output another size), else the output */
    return in_bytes != U ? in_bytes : out_bytes;
}

/* torch's ScalarType names (c10/core/ScalarType.h) and the C names the
 * legacy profiler's "Input type" uses, each with its bytes */
static const struct {
    const char *torch, *name;
    size_t size;
} dtypes[] = {
    {"BFloat16", "bfloat16", 2},
    {"Half", "float16", 2},
    {"Float8_e4m3fn", "float8e4m3", 1},
    {"Float8_e4m3fnuz", "float8e4m3", 1},
    {"Float8_e5m2", "float8e5m2", 1},
    {"Float8_e5m2fnuz", "float8e5m2", 1},
    {"Float", "float32", 4},
    {"float", "float32", 4},
    {"Double", "float64", 8},
    {"double", "float64", 8},
    {"Long", "int64", 8},
    {"long", "int64", 8},
    {"long int", "int64", 8},
    {"Int", "int32", 4},
    {"int", "int32", 4},
    {"Short", "int16", 2},
    {"short", "int16", 2},
    {"Char", "int8", 1},
    {"signed char", "int8", 1},
    {"Byte", "uint8", 1},
    {"unsigned char", "uint8", 1},
    {"Bool", "bool", 1},
    {"bool", "bool", 1},
    {"ComplexFloat", "complex64", 8},
    {"c10::complex<float>", "complex64", 8},
    {"ComplexDouble", "complex128", 16},
    {"c10::Half", "float16", 2},
    {"c10::BFloat16", "bfloat16", 2},
    {"c10::Float8_e4m3fn", "float8e4m3", 1},
    {"c10::Float8_e5m2", "float8e5m2", 1},
};

size_t tp__wl_torch_dtype(const char *s, size_t len, const char **name)
{
    for (size_t i = 0; s && i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strlen(dtypes[i].torch) == len && memcmp(s, dtypes[i].torch, len) == 0) {
            if (name)
                *name = dtypes[i].name;
            return dtypes[i].size;
        }
    if (name)
        *name = NULL;
    return 0;
}
