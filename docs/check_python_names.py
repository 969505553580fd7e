#!/usr/bin/env python3
"""docs.python-names: every Python name the cheat sheet gives exists in the installed packages.

    check_python_names.py docs/api-map.tsv

Reads the cuda.core and cuda.bindings columns of docs/api-map.tsv and resolves each name in the
installed packages (cuda.core 1.2 and cuda.bindings 13 were the versions the table was written
against): "Device.create_stream" must be an attribute of cuda.core.Device, "driver.cuMemAlloc" one
of cuda.bindings.driver. A name that goes through a property ("Kernel.occupancy.max_...") is looked
up on the class the property returns, found by name in cuda.core's modules. Prints every name it
checked and every one it could not find, and exits 1 if any is missing. Where python3 has no
cuda.core or cuda.bindings (a machine without NVIDIA's Python packages) it exits 77, which ctest
reports as skipped. Importing the packages needs no GPU, but they are installed on the GPU machines.
"""
import importlib
import inspect
import re
import sys

SKIPPED = 77

# Properties whose value is an object of another class: the class to look the rest of the name up on.
PROPERTY_TYPES = {
    "Kernel.occupancy": "KernelOccupancy",
    "Kernel.attributes": "KernelAttributes",
    "Device.properties": "DeviceProperties",
    "Device.resources": "DeviceResources",
    "DeviceMemoryResource.attributes": "_MemPoolAttributes",
}


def names_in(cell):
    """The dotted names of a cell: "none", notes in parentheses and separators left out."""
    if cell.startswith("none"):
        return []
    names = cell.split(" (", 1)[0]
    return [n.strip() for n in names.split(",") if n.strip()]


def class_named(package, name):
    """A class of that name in any loaded module of the package."""
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == package or module_name.startswith(package + ".")):
            continue
        found = getattr(module, name, None)
        if inspect.isclass(found):
            return found
    return None


def resolve(root, package, dotted):
    """Follows a dotted name from a package: True if every part exists."""
    parts = dotted.split(".")
    here = root
    for i, part in enumerate(parts):
        prefix = ".".join(parts[: i + 1])
        if prefix in PROPERTY_TYPES and i + 1 < len(parts):
            here = class_named(package, PROPERTY_TYPES[prefix])
            if here is None:
                return False
            continue
        if not hasattr(here, part):
            return False
        here = getattr(here, part)
    return True


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    try:
        core = importlib.import_module("cuda.core")
        bindings = importlib.import_module("cuda.bindings")
        importlib.import_module("cuda.bindings.driver")
    except ImportError as e:
        print(f"SKIPPED: cuda.core and cuda.bindings are not installed for {sys.executable} ({e})")
        return SKIPPED
    print(f"cuda.core {getattr(core, '__version__', '?')}, cuda.bindings {getattr(bindings, '__version__', '?')}")

    header = None
    checked, missing = 0, []
    with open(argv[1], encoding="utf-8") as table:
        for number, line in enumerate(table, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if header is None:
                header = fields
                continue
            row = dict(zip(header, fields))
            for column, root, package in (("cuda.core", core, "cuda.core"), ("cuda.bindings", bindings, "cuda.bindings")):
                for name in names_in(row[column]):
                    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", name):
                        missing.append(f"{argv[1]}:{number}: {row['call']}: '{name}' is not a dotted Python name")
                        continue
                    checked += 1
                    if not resolve(root, package, name):
                        missing.append(f"{argv[1]}:{number}: {row['call']}: {package}.{name} does not exist")
    for m in missing:
        print(m)
    print(f"{checked} names checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
