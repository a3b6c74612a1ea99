#!/usr/bin/env bash
# The GPU issues' measurements in one run, for a lent machine with an NVIDIA GPU (a session
# is short: the steps run in order of priority, and a step that fails does not stop the
# next). Each step's output goes to OUT/<step>.txt (default OUT: gpu-results/), its exit
# status on the file's last line; the benchmarks also write bench/results/*.json.
#
#   1. kernels:  the Triton kernels against their PyTorch references on the GPU, compiled
#                by Triton's real compiler (tests/gpu_rm runs them on CUDA when it can)
#   2. rm:       the reward-model path on a ~1B model (#25's target run)
#   3. grm:      generative and process reward models on a 0.5B-shaped model (#21)
#   4. logprobs: token statistics on the same shape, and the LM head's fraction of the
#                measured bf16 matmul rate (#27)
#
# Prerequisite: this checkout installed with the gpu and dev extras on the machine's own
# CUDA build of torch (`pip install -e '.[gpu,dev]'`).
#
#   bash bench/gpu_session.sh [OUT]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-results}"
mkdir -p "$out"

step() {
    local name="$1"
    shift
    echo "== $name: $*"
    "$@" 2>&1 | tee "$out/$name.txt"
    echo "exit ${PIPESTATUS[0]}" | tee -a "$out/$name.txt"
}

python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'" || exit 1
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
python -c "import torch, triton, transformers
print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__,
      'transformers', transformers.__version__, torch.cuda.get_device_name())" |
    tee "$out/versions.txt"

step kernels env -u TRITON_INTERPRET python -m pytest -q -p no:cacheprovider tests/gpu_rm
step rm python bench/rm.py --device cuda --dtype bfloat16 --preset 1b --workload both
step grm python bench/grm.py --device cuda --dtype bfloat16 \
    --hidden 896 --layers 24 --vocab 151936 --batch 64 --group 16
step logprobs python bench/logprobs.py --part throughput --device cuda --dtype bfloat16 \
    --hidden 896 --layers 24 --vocab 151936
step logprobs-head python bench/logprobs.py --part head --device cuda --dtype bfloat16 \
    --hidden 896 --vocab 151936 --head-tokens 16384
