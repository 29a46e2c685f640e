#!/usr/bin/python3
"""Validate result documents against docs/schema/result-v1.json.

usage: validate.py SCHEMA DOC [DOC...]; exits 1 naming the first bad document
and the path of the failing field."""
import json
import sys

import jsonschema


def main() -> int:
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
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
