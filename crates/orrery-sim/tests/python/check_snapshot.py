#!/usr/bin/env python3
"""Reads orrery snapshots with NumPy and h5py and checks them against the expected values.

Usage: check_snapshot.py EXPECTED.json SNAPSHOT [SNAPSHOT ...]

EXPECTED.json holds what the Rust side wrote: pos and vel (n rows of 3), mass, ids, time,
step, tree_leaves (a list, or null when the snapshot has none) and attributes. Each
SNAPSHOT is an .npz (read with numpy.load, no pickle) or an .hdf5/.h5 (read with h5py,
GADGET-4 layout). Floats are compared bit for bit, dtypes and shapes exactly, so any
drift between the Rust writer and what Python tools see fails.

Why a separate script: the Rust test suite runs it when h5py is installed, and a person
can run it by hand on any snapshot the CLI wrote. Prints "ok <path>" per file; exits 1
with one line per problem otherwise.
"""

import json
import sys

import numpy as np

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
    return cond


def bits(a):
    """The bit patterns of a float64 array, so -0.0 and 0.0 differ."""
    return np.ascontiguousarray(np.asarray(a, dtype="<f8")).view("<u8")


def same_floats(got, want, what):
    got = np.asarray(got)
    want = np.asarray(want, dtype="<f8")
    if check(got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"):
        check(np.array_equal(bits(got), bits(want)), f"{what}: values differ from the written ones")


def check_npz(path, exp):
    n = len(exp["mass"])
    with np.load(path, allow_pickle=False) as s:
        want = {"pos", "vel", "mass", "ids", "time", "step", "attributes"}
        if exp.get("tree_leaves") is not None:
            want.add("tree_leaves")
        check(set(s.files) == want, f"{path}: members {sorted(s.files)}, expected {sorted(want)}")
        for name, dtype, shape in [
            ("pos", "<f8", (n, 3)),
            ("vel", "<f8", (n, 3)),
            ("mass", "<f8", (n,)),
            ("ids", "<u8", (n,)),
            ("time", "<f8", ()),
            ("step", "<u8", ()),
        ]:
            a = s[name]
            check(a.dtype == np.dtype(dtype), f"{path}: {name} dtype {a.dtype.str}, expected {dtype}")
            check(a.shape == shape, f"{path}: {name} shape {a.shape}, expected {shape}")
            check(a.flags["C_CONTIGUOUS"], f"{path}: {name} is not in C order")
        same_floats(s["pos"], exp["pos"], f"{path}: pos")
        same_floats(s["vel"], exp["vel"], f"{path}: vel")
        same_floats(s["mass"], exp["mass"], f"{path}: mass")
        same_floats(s["time"], exp["time"], f"{path}: time")
        check(s["ids"].tolist() == exp["ids"], f"{path}: ids differ")
        check(int(s["step"]) == exp["step"], f"{path}: step {int(s['step'])}, expected {exp['step']}")
        a = s["attributes"]
        check(a.dtype == np.dtype("u1") and a.ndim == 1, f"{path}: attributes dtype {a.dtype.str} shape {a.shape}")
        if "tree_leaves" in want:
            t = s["tree_leaves"]
            check(t.dtype == np.dtype("<u8") and t.ndim == 1, f"{path}: tree_leaves dtype {t.dtype.str} shape {t.shape}")
            check(t.tolist() == exp["tree_leaves"], f"{path}: tree_leaves differ")
        attrs = json.loads(a.tobytes().decode("utf-8"))
        check(attrs == exp["attributes"], f"{path}: attributes {attrs!r}, expected {exp['attributes']!r}")


def check_hdf5(path, exp):
    import h5py

    n = len(exp["mass"])
    with h5py.File(path, "r") as f:
        for g in ["Header", "Config", "Parameters", "PartType1"]:
            check(g in f, f"{path}: group {g} missing")
        h = f["Header"].attrs
        counts = [0, n, 0, 0, 0, 0]
        for name in ["NumPart_ThisFile", "NumPart_Total", "NumPart_Total_HighWord"]:
            v = h[name]
            check(v.dtype == np.dtype("uint32"), f"{path}: Header/{name} dtype {v.dtype}, expected uint32")
            want = [0] * 6 if name.endswith("HighWord") else counts
            check(v.tolist() == want, f"{path}: Header/{name} = {v.tolist()}, expected {want}")
        mt = h["MassTable"]
        check(mt.dtype == np.dtype("float64") and mt.tolist() == [0.0] * 6, f"{path}: MassTable {mt!r}")
        same_floats(h["Time"], exp["time"], f"{path}: Header/Time")
        for name, want in [("Redshift", 0.0), ("BoxSize", 0.0), ("Omega0", 0.0), ("OmegaLambda", 0.0),
                           ("HubbleParam", 1.0)]:
            v = np.asarray(h[name])
            check(v.dtype == np.dtype("float64") and v.shape == () and v == want,
                  f"{path}: Header/{name} = {v!r}, expected float64 {want}")
        for name, want in [("NumFilesPerSnapshot", 1), ("Flag_Sfr", 0), ("Flag_Cooling", 0),
                           ("Flag_StellarAge", 0), ("Flag_Metals", 0), ("Flag_Feedback", 0),
                           ("Flag_DoublePrecision", 1)]:
            v = np.asarray(h[name])
            check(v.dtype == np.dtype("int32") and v.shape == () and v == want,
                  f"{path}: Header/{name} = {v!r}, expected int32 {want}")
        p = f["PartType1"]
        for name, dtype, shape in [
            ("Coordinates", "float64", (n, 3)),
            ("Velocities", "float64", (n, 3)),
            ("Masses", "float64", (n,)),
            ("ParticleIDs", "uint64", (n,)),
        ]:
            d = p[name]
            check(d.dtype == np.dtype(dtype), f"{path}: PartType1/{name} dtype {d.dtype}, expected {dtype}")
            check(d.shape == shape, f"{path}: PartType1/{name} shape {d.shape}, expected {shape}")
        same_floats(p["Coordinates"][()], exp["pos"], f"{path}: Coordinates")
        same_floats(p["Velocities"][()], exp["vel"], f"{path}: Velocities")
        same_floats(p["Masses"][()], exp["mass"], f"{path}: Masses")
        check(p["ParticleIDs"][()].tolist() == exp["ids"], f"{path}: ParticleIDs differ")
        leaves = exp.get("tree_leaves")
        if leaves is None:
            check("Orrery" not in f, f"{path}: group Orrery present without tree leaves")
        elif check("Orrery/TreeLeaves" in f, f"{path}: dataset Orrery/TreeLeaves missing"):
            t = f["Orrery/TreeLeaves"]
            check(t.dtype == np.dtype("uint64") and t.ndim == 1, f"{path}: Orrery/TreeLeaves dtype {t.dtype} shape {t.shape}")
            check(t[()].tolist() == leaves, f"{path}: Orrery/TreeLeaves differ")
        params = dict(f["Parameters"].attrs)
        step = params.pop("OrreryStep", None)
        check(step is not None and np.asarray(step).dtype == np.dtype("uint64") and int(step) == exp["step"],
              f"{path}: Parameters/OrreryStep = {step!r}, expected uint64 {exp['step']}")
        strs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in params.items()}
        check(all(isinstance(v, str) for v in strs.values()), f"{path}: Parameters values are not all strings")
        check(strs == exp["attributes"], f"{path}: Parameters {strs!r}, expected {exp['attributes']!r}")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1]) as fh:
        exp = json.load(fh)
    for path in argv[2:]:
        before = len(problems)
        if path.endswith(".npz"):
            check_npz(path, exp)
        elif path.endswith((".hdf5", ".h5")):
            check_hdf5(path, exp)
        else:
            problems.append(f"{path}: unknown extension")
        if len(problems) == before:
            print(f"ok {path}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
