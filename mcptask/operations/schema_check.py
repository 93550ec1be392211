"""Check a value against a server's JSON Schema (a tool's `inputSchema`, an elicitation's
`requestedSchema`) without trusting the schema: a `$ref` to another document is never
fetched (the registry retrieves nothing), and the check ends after CHECK_SECONDS (a `pattern`
can backtrack for hours)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from mcptask.errors import TimedOut, time_bound
from mcptask.protocol.jsonrpc import JsonObject

CHECK_SECONDS = 2.0


@dataclass(frozen=True)
class SchemaCheck:
    """The outcome: `problem`, the first mismatch, found at `where` (a `/` path, empty for
    the value itself), with `more` others; or `unusable`, why the schema itself cannot be used
    (then nothing was checked)."""

    problem: str | None = None
    where: str = ""
    more: int = 0
    unusable: str | None = None


def check_against(
    schema: JsonObject, value: JsonObject, *, hidden: Collection[str] = ()
) -> SchemaCheck:
    """JSON Schema, 2020-12 unless it says otherwise. `hidden`: properties whose values are
    secret: a mismatch there names the rule it breaks, never the value."""
    # Imported here: jsonschema is needed by `start` and `answer` alone.
    import jsonschema
    from jsonschema import validators
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    validator_class = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        with time_bound(CHECK_SECONDS):
            validator_class.check_schema(schema)
            # An empty registry: only the schema itself (and the drafts' own meta-schemas,
            # which jsonschema bundles) can be referred to.
            validator = validator_class(schema, registry=Registry())
            errors = list(validator.iter_errors(value))
            best = jsonschema.exceptions.best_match(errors)
    except Unresolvable as exc:
        ref = getattr(exc, "ref", None)
        where = f" to {ref[:200]!r}" if isinstance(ref, str) else ""
        reason = f"an unresolvable $ref{where}; mcptask fetches no other document"
        return SchemaCheck(unusable=reason)
    except jsonschema.SchemaError as exc:
        return SchemaCheck(unusable=exc.message)
    except TimedOut:
        return SchemaCheck(unusable=f"checking took over {CHECK_SECONDS:g} s")
    if best is None:
        return SchemaCheck()
    where = "/".join(str(part) for part in best.absolute_path)
    message = best.message
    if best.absolute_path and best.absolute_path[0] in hidden:
        quoted = repr(best.instance)  # jsonschema's messages start so: "'abc' is too short"
        message = (
            "the value (hidden)" + message[len(quoted) :]
            if message.startswith(quoted)
            else f"the value (hidden) breaks its {best.validator} rule"
        )
    for name in hidden:  # a rule of the whole value quotes it whole: "{'pw': 'abc'} has ..."
        if name in value:
            message = message.replace(repr(value[name]), "<hidden>")
    return SchemaCheck(message, where, len(errors) - 1)
