//! Snapshots: GADGET-4 HDF5 and NumPy `.npz` (to be written).
