# benches/device/reference.sh — makes Erwin's reference importable on the device machine:
# installs the carried wheel (.whl/balltree_erwin-0.1.0-cp312-*.whl, built as
# benches/python/balltree_peer.py's header says) into /tmp/site and puts it on
# PYTHONPATH. Sourced by balltree.sh and cpu_rounds.sh, after they set $OUT; pip's output
# and the installed versions go to $OUT/env.txt.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/balltree_erwin-0.1.0-cp312-cp312-*.whl >> "$OUT/env.txt" 2>&1 || echo "wheel install failed" >> "$OUT/env.txt"
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import balltree, numpy, torch; print('balltree', balltree.__version__, balltree.__file__, 'numpy', numpy.__version__, 'torch', torch.__version__)" >> "$OUT/env.txt" 2>&1
