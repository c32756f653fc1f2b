set -u
SAN_TIMEOUT=120 RACE_FILTER=__none__ bash benches/device/tree_verify.sh > /tmp/verify.txt 2>&1
mkdir -p $OUT/verify; cp $OUT/tests.txt $OUT/verify/tests.txt 2>/dev/null; rm -f $OUT/tests.txt $OUT/logs.tar.gz
BENCH_ARGS="--repeats 5 --warmup 1" bash benches/device/tree.sh
cat $OUT/verify/tests.txt | head -12
