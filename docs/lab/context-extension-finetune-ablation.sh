#!/bin/bash
# PI fine-tune length/lr ablation through the CLI (lab train --init ... --rope-scaling linear)
set -e
P=${POSENC:-$PWD/build/posenc}   # run from the repository root after building
mkdir -p ${WORK:-/tmp/posenc-ce-ablation}; cd ${WORK:-/tmp/posenc-ce-ablation}
ls /usr/share/games/fortunes/ | grep -v '\.dat$' | grep -v '\.u8$' | sort | while read f; do [ -f /usr/share/games/fortunes/$f ] && cat /usr/share/games/fortunes/$f; done > all.txt
n=$(stat -c %s all.txt); t=$((n*9/10))
head -c $t all.txt > train.txt; tail -c +$((t+1)) all.txt > valid.txt
M="--layers 2 --d-model 64 --heads 4 --d-ff 256 --batch 16"
$P lab train --scheme rope --text train.txt --context 64 --steps 600 --lr 2e-3 $M --log-every 600 -o base.safetensors > base.log
ev() { $P lab eval --checkpoint $1 --text valid.txt --len $2 --max-windows $((8192/$2)) --batch 1 --json ${@:3}; }
echo "base L64 $(ev base.safetensors 64)"; echo "base none 128 $(ev base.safetensors 128)"; echo "base linear 128 $(ev base.safetensors 128 --rope-scaling linear --rope-factor 2)"
for cfg in "none 30 2e-4" "linear 30 2e-4" "linear 120 2e-4" "linear 120 1e-3" "linear 300 1e-3" "none 120 1e-3" "ntk 120 1e-3" "yarn 120 1e-3"; do
  set -- $cfg
  extra=""; [ $1 != none ] && extra="--rope-scaling $1 --rope-factor 2"
  $P lab train --init base.safetensors --text train.txt --context 128 --steps $2 --lr $3 --warmup 0 --log-every 1000 $extra -o ft.safetensors > ft.log
  echo "ft $1 steps $2 lr $3: L64 $(ev ft.safetensors 64) | 128 $(ev ft.safetensors 128)"
done
