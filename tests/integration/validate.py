#!/usr/bin/python3
"""Validate result documents against docs/schema/result-v1.json.

usage: validate.py SCHEMA DOC [DOC...]; exits 1 naming the first bad document
and the path of the failing field. validate.py SCHEMA --lines DEF FILE checks
each line of a JSON-lines FILE against the schema's $defs/DEF."""
import json
import sys

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    if len(sys.argv) == 5 and sys.argv[2] == "--lines":
        sub = dict(schema, **{"$ref": f"#/$defs/{sys.argv[3]}"})
        for key in ("required", "properties", "allOf", "type", "if", "then", "else"):
            sub.pop(key, None)
        lines = jsonschema.Draft202012Validator(sub)
        bad = no = 0
        for no, line in enumerate(open(sys.argv[4]), 1):
            try:
                doc = json.loads(line)
            except ValueError as e:
                print(f"{sys.argv[4]}:{no}: not JSON: {e}")
                bad += 1
                continue
            for e in list(lines.iter_errors(doc))[:3]:
                where = "/".join(str(p) for p in e.absolute_path) or "(root)"
                print(f"{sys.argv[4]}:{no}: {where}: {e.message[:300]}")
                bad += 1
        return 1 if bad or no == 0 else 0
    bad = 0
    for path in sys.argv[2:]:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"{path}: not readable JSON: {e}")
            bad += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print(f"{path}: {where}: {e.message[:300]}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
