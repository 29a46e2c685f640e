/* An isolation row (isolate_int.h): the members of a slow group too small
 * to split (two or three nodes). It has no tests of its own: each member
 * is a node action, in group mode, with this one as its parent; when the
 * last is settled and none was named, the links of their ring are probed
 * (tp__triage_iso_members_done). */
#include "isolate_int.h"

const struct tp__triage_iso_kind tp__triage_iso_members = {TP_TRIAGE_CONFIRM, NULL, NULL};
