"""The manual's generated reference pages: the JSON API from redolab's OpenAPI document and the CLI from
typer's own command tree. An MkDocs hook (mkdocs.yml `hooks:`), so the pages are written at every build
from the code that runs and cannot drift from it; tests/test_manual.py checks the built pages."""

from __future__ import annotations

import tempfile
from pathlib import Path

API_PAGE = "reference/api-endpoints.md"
CLI_PAGE = "reference/cli-commands.md"
METHODS = ("get", "post", "put", "patch", "delete")


def _cell(text: object) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def openapi_document() -> dict:
    """The OpenAPI document of an app built on a throwaway data directory (no database is opened)."""
    import secrets

    from redolab.core.config import Settings
    from redolab.main import create_app

    with tempfile.TemporaryDirectory(prefix="redolab-manual-") as tmp:
        settings = Settings(
            database_url=f"sqlite:///{tmp}/manual.db",
            data_dir=Path(tmp),
            secret_key=secrets.token_urlsafe(48),
            worker_enabled=False,
            auto_migrate=False,
            _env_file=None,
        )
        app = create_app(settings)
        try:
            return app.openapi()
        finally:
            app.state.engine.dispose()


def _schema_name(schema: dict | None) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"list of {_schema_name(schema.get('items'))}"
    if "anyOf" in schema:
        return " or ".join(_schema_name(part) for part in schema["anyOf"])
    return schema.get("type", "")


def _operation(method: str, path: str, operation: dict) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", ""]
    if operation.get("summary"):
        lines += [f"**{operation['summary']}**", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| Parameter | In | Type | Required | Description |", "| --- | --- | --- | --- | --- |"]
        for parameter in parameters:
            lines.append(
                f"| `{parameter['name']}` | {parameter['in']} | {_cell(_schema_name(parameter.get('schema')))} | "
                f"{'yes' if parameter.get('required') else 'no'} | {_cell(parameter.get('description'))} |"
            )
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {})
    for media_type, content in body.items():
        lines += [f"Request body ({media_type}): {_cell(_schema_name(content.get('schema'))) or 'form fields'}", ""]
    responses = operation.get("responses", {})
    if responses:
        lines += ["| Status | Meaning |", "| --- | --- |"]
        for code, response in responses.items():
            schema = _schema_name(response.get("content", {}).get("application/json", {}).get("schema"))
            lines.append(f"| {code} | {_cell(response.get('description'))}{f' ({schema})' if schema else ''} |")
        lines.append("")
    return lines


def _schemas(document: dict) -> list[str]:
    lines = ["## Schemas", ""]
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        lines += [f"### {name}", ""]
        if schema.get("description"):
            lines += [_cell(schema["description"]), ""]
        properties = schema.get("properties", {})
        if properties:
            required = set(schema.get("required", []))
            lines += ["| Field | Type | Required | Description |", "| --- | --- | --- | --- |"]
            for field, spec in properties.items():
                lines.append(
                    f"| `{field}` | {_cell(_schema_name(spec))} | {'yes' if field in required else 'no'} | "
                    f"{_cell(spec.get('description'))} |"
                )
            lines.append("")
    return lines


def api_reference(document: dict) -> str:
    """Every path and method of the JSON API, then every schema, as Markdown."""
    lines = [
        "# JSON API endpoints",
        "",
        f"Generated from redolab {document['info']['version']}'s OpenAPI document at every build of this manual "
        "(the same document `/api/v1/openapi.json` serves and `/api/docs` shows). Every endpoint needs a "
        "bearer token (see [the JSON API](api.md)) except `POST /api/v1/auth/token`.",
        "",
    ]
    by_tag: dict[str, list[str]] = {}
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                tag = (item[method].get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).extend(_operation(method, path, item[method]))
    for tag, operations in by_tag.items():
        lines += [f"## {tag}", "", *operations]
    return "\n".join(lines + _schemas(document)) + "\n"


def _command_lines(command, context, words: list[str]) -> list[str]:
    lines = [f"## `{' '.join(words)}`", ""]
    if command.help:
        lines += [command.help.strip(), ""]
    usage = " ".join(command.collect_usage_pieces(context))
    lines += ["```", f"{' '.join(words)} {usage}".rstrip(), "```", ""]
    records = [param.get_help_record(context) for param in command.get_params(context)]
    rows = [f"| `{_cell(record[0])}` | {_cell(record[1])} |" for record in records if record]
    if rows:
        lines += ["| Argument or option | Meaning |", "| --- | --- |", *rows, ""]
    return lines


def _walk(command, context, words: list[str]) -> list[str]:
    """A command's section, then its subcommands' (typer ships its own click: groups are known by their
    list of commands, contexts made by each command's own class)."""
    if not hasattr(command, "list_commands"):
        return _command_lines(command, context, words)
    lines = _command_lines(command, context, words) if len(words) > 1 else []
    for name in command.list_commands(context):
        child = command.get_command(context, name)
        if child is None or child.hidden:
            continue
        lines += _walk(child, child.context_class(child, info_name=name, parent=context), [*words, name])
    return lines


def cli_reference() -> str:
    """Every `redolab` command with its usage, arguments and options, from typer's click tree."""
    import typer

    from redolab.cli import app

    root = typer.main.get_command(app)
    context = root.context_class(root, info_name="redolab")
    lines = [
        "# CLI commands",
        "",
        "Generated from the `redolab` command's own help at every build of this manual; "
        "`redolab COMMAND --help` prints the same. See [the CLI](cli.md) for how the commands fit together.",
        "",
        (root.help or "").strip(),
        "",
    ]
    return "\n".join(lines + _walk(root, context, ["redolab"])) + "\n"


def on_files(files, config):
    """MkDocs hook: add the two generated pages to the site."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, API_PAGE, content=api_reference(openapi_document())))
    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    return files
