"""``tensilekit examples DIR``: write tensilekit's own example libraries (the files the guides use)."""

from __future__ import annotations

from pathlib import Path

import click

from tensilekit.cli.options import UserPath


@click.command("examples")
@click.argument("folder", type=UserPath(path_type=Path, file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite example files that exist with other content.")
def examples_command(folder: Path, force: bool) -> None:
    """Write tensilekit's example libraries into FOLDER (made if missing).

    gfx90a Tensile (rocBLAS) logic files and their master library (YAML and .dat), a tuning
    result to merge into them, gfx942 tensilelite (hipBLASLt) logic files and their master.
    All are tensilekit's own, made by its code; the same every time.
    """
    from tensilekit.data.examples import write_examples

    written = write_examples(folder, force=force)
    entries: dict[str, int] = {}
    for path in written:
        top = path.relative_to(folder).parts
        name = f"{top[0]}/" if len(top) > 1 else top[0]
        entries[name] = entries.get(name, 0) + 1
    listed = ", ".join(f"{name} ({count})" if name.endswith("/") else name for name, count in entries.items())
    click.echo(f"wrote {len(written)} example files into {folder}: {listed}")


__all__ = ["examples_command"]
