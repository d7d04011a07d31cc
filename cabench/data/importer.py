"""``cabench data import``: your own logs to a canonical dataset folder.

A mapping YAML names, for each canonical column (SPEC §1), the source column
that holds it (``columns``) or a constant (``constants``), optional unit
factors (``scale``, e.g. ``latency_s: 0.001`` for milliseconds) and the
``dataset`` metadata. Without a ``config_id`` column, the id is built from the
configuration metadata. The result is validated exactly like the loader.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from cabench.data.io import read_table, write_logs, write_metadata
from cabench.data.schema import COLUMNS, validate_logs
from cabench.errors import CabenchError
from cabench.storage import publish_folder, staging_folder
from cabench.yamlio import load_yaml, yaml_problem

MAPPING_KEYS = ("columns", "constants", "scale", "dataset")


def _mapping(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise CabenchError(f"{path}: mapping file not found")
    try:
        raw = load_yaml(path.read_text())
    except yaml.YAMLError as exc:
        raise CabenchError(f"{path}: malformed YAML ({yaml_problem(exc)})") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not a text file; a mapping is YAML") from None
    if not isinstance(raw, dict):
        raise CabenchError(f"{path}: expected a mapping with keys {', '.join(MAPPING_KEYS)}")
    for key in raw:
        if key not in MAPPING_KEYS:
            near = difflib.get_close_matches(str(key), MAPPING_KEYS, n=1)
            raise CabenchError(f"{path}: {key}: unknown key" + (f"; did you mean '{near[0]}'?" if near else ""))
    for key in ("columns", "constants", "scale", "dataset"):
        value = raw.get(key) or {}
        if not isinstance(value, dict):
            raise CabenchError(f"{path}: {key}: expected a mapping")
        for name in value if key in ("columns", "constants", "scale") else ():
            if name not in COLUMNS:
                near = difflib.get_close_matches(str(name), list(COLUMNS), n=1)
                hint = f"; did you mean '{near[0]}'?" if near else f"; canonical columns: {', '.join(COLUMNS)}"
                raise CabenchError(f"{path}: {key}.{name}: not a canonical column{hint}")
            item = value[name]
            if key == "columns" and not isinstance(item, (str, int)):
                raise CabenchError(f"{path}: columns.{name}: expected the name of one source column, got {item!r}")
            if key == "constants" and (item is None or isinstance(item, (list, dict))):
                raise CabenchError(f"{path}: constants.{name}: expected one value (text or number), got {item!r}")
        raw[key] = value
    return raw


def import_logs(source: Path, mapping_path: Path, out: Path, force: bool = False) -> Path:
    """Map, validate and write ``source`` as a dataset folder ``out``.

    An existing ``out`` is refused unless ``force``; the folder is written in
    full beside ``out`` and then moved into place atomically, so an interrupted
    import never leaves a partial dataset or loses the old one.
    """
    if out.exists() and not out.is_dir():
        raise CabenchError(f"{out}: exists and is not a folder; pass --out with a new dataset folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise CabenchError(f"{out}: folder exists and is not empty; pass another --out, or --force to replace it "
                           "(the old folder is replaced only once the new one is complete)")
    mapping = _mapping(mapping_path)
    if not source.is_file():
        raise CabenchError(f"{source}: source log file not found")
    frame = read_table(source)
    columns, constants, scale = mapping["columns"], mapping["constants"], mapping["scale"]
    both = sorted(set(columns) & set(constants))
    if both:
        raise CabenchError(f"{mapping_path}: {both[0]} is given both as a column and as a constant; keep one")
    canonical = pd.DataFrame(index=frame.index)
    for name in COLUMNS:
        if name in columns:
            src = columns[name]
            if src not in frame.columns:
                near = difflib.get_close_matches(str(src), [str(c) for c in frame.columns], n=1)
                hint = f"; did you mean '{near[0]}'?" if near else f"; it has {', '.join(map(str, frame.columns))}"
                raise CabenchError(f"{source}: no column '{src}' (mapped to {name} in {mapping_path}){hint}")
            canonical[name] = frame[src]
        elif name in constants:
            canonical[name] = constants[name]
        elif name != "config_id":
            raise CabenchError(f"{mapping_path}: columns.{name}: missing; map a source column or give a constant")
    for name, factor in scale.items():
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0:
            raise CabenchError(f"{mapping_path}: scale.{name}: expected a positive number, got {factor!r}")
        canonical[name] = pd.to_numeric(canonical[name], errors="coerce") * factor
    if "config_id" not in canonical:
        canonical["config_id"] = (canonical["model"].astype(str) + "_t" + canonical["temperature"].astype(str)
                                  + "_g" + canonical["max_new_tokens"].astype(str) + "_"
                                  + canonical["prompting"].astype(str))
    valid = validate_logs(canonical[list(COLUMNS)], f"{source} (mapped by {mapping_path})")
    meta = {"name": out.name, "description": f"Imported from {source.name}", "provenance": str(source),
            "surrogate": False, "licence": "unspecified", **mapping["dataset"]}
    if not isinstance(meta["surrogate"], bool):
        raise CabenchError(f"{mapping_path}: dataset.surrogate: expected true or false")
    if not isinstance(meta.get("name"), str) or not meta["name"].strip():
        raise CabenchError(f"{mapping_path}: dataset.name: expected a non-empty text, got {meta.get('name')!r}")
    try:
        staged = staging_folder(out)
        write_logs(valid, staged / "logs.csv.gz")
        write_metadata(meta, staged / "dataset.yaml")
        publish_folder(staged, out)
    except OSError as exc:
        raise CabenchError(f"{exc.filename or out}: cannot write the dataset ({exc.strerror}); "
                           "pass --out with a writable place") from None
    return out
