#!/usr/bin/python3
"""The metric names PromQL expressions query, for
tests/integration/contrib/contrib_dashboard.sh: does the Grafana dashboard
or an alert rule ask for a series nothing writes (a misspelt or renamed
metric shows as an empty panel or an alert that never fires, not as an
error)?

  promql_names.py names EXPR             the metric names of one expression
  promql_names.py check KNOWN DASHBOARD.json RULES.yml [RULES_TEST.yml]
      every expression of the dashboard (panel targets, rows' panels,
      template variables' queries), of the rules and of the rules' tests
      (their input series and expressions): each must name at least one
      metric, and every metric named must be a line of KNOWN. Prints
      "WHERE: NAME" for each unknown name and exits 1 when there is one;
      prints the count of expressions and of distinct names otherwise.

A metric name is an identifier that PromQL reads as a selector: not inside
a string, a label matcher {...}, a range or subquery [...], a label list
after by/without/on/ignoring/group_left/group_right; not a keyword or an
aggregation operator; not followed by "(" (a function); not part of a
number or a duration (1e3, 5m). Grafana's $variables and ${...} are
dropped first; label_values(EXPR, LABEL) gives EXPR's names, and the LABEL
alone (label_values(LABEL)) none.
"""
import json
import re
import sys

KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "bool", "offset", "inf", "nan"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}


def names(expr):
    s = expr
    m = re.fullmatch(r"\s*label_values\((.*)\)\s*", s, re.S)
    if m:
        parts = m.group(1).rsplit(",", 1)
        return names(parts[0]) if len(parts) == 2 else set()
    m = re.fullmatch(r"\s*query_result\((.*)\)\s*", s, re.S)
    if m:
        s = m.group(1)
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', " ", s)
    s = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_]\w*|\[\[[^\]]*\]\]", " 1 ", s)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    out = set()
    for m in re.finditer(r"(?<![\w.:])([A-Za-z_:][\w:]*)", s):
        w = m.group(1)
        if s[m.end():].lstrip().startswith("("):
            continue
        if w.lower() in KEYWORDS or w in AGGREGATIONS:
            continue
        out.add(w)
    return out


def dashboard_exprs(d):
    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(d.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                yield "panel %r %s" % (p.get("title"), t.get("refId")), t["expr"]
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        yield "variable $%s" % v.get("name"), q
    for a in d.get("annotations", {}).get("list", []):
        if "expr" in a:
            yield "annotation %r" % a.get("name"), a["expr"]


def rules_exprs(r):
    for g in r.get("groups", []):
        for rule in g.get("rules", []):
            yield "rule %s" % (rule.get("alert") or rule.get("record")), rule["expr"]


def rules_test_exprs(t):
    for i, case in enumerate(t.get("tests", [])):
        for s in case.get("input_series", []):
            yield "test %d series" % i, s["series"]
        for e in case.get("promql_expr_test", []):
            yield "test %d expr" % i, e["expr"]


def main():
    if sys.argv[1] == "names":
        print(" ".join(sorted(names(sys.argv[2]))))
        return 0
    import yaml
    known = {l.strip() for l in open(sys.argv[2]) if l.strip()}
    exprs = list(dashboard_exprs(json.load(open(sys.argv[3]))))
    exprs += list(rules_exprs(yaml.safe_load(open(sys.argv[4]))))
    if len(sys.argv) > 5:
        exprs += list(rules_test_exprs(yaml.safe_load(open(sys.argv[5]))))
    bad, seen = 0, set()
    for where, e in exprs:
        n = names(e)
        if not n and not where.startswith("variable"):
            print("%s: names no metric: %s" % (where, e))
            bad += 1
        for x in sorted(n - known):
            print("%s: %s" % (where, x))
            bad += 1
        seen |= n
    if bad:
        return 1
    print("%d expressions, %d metrics, all written" % (len(exprs), len(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
