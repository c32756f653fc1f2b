# benches/device/env.sh — the environment shared by the device scripts (verify.sh,
# primitives.sh, balltree.sh, balltree_check.sh); they source it first thing, from the
# repository root on the device machine:
#   . "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# It
# - unpacks the GL/Vulkan loader packages carried in .gl (.gl/*.deb) over / and runs
#   ldconfig, so wgpu finds a Vulkan loader;
# - points the loader at the NVIDIA Vulkan driver (VK_DRIVER_FILES) and puts
#   /usr/local/cuda/bin (compute-sanitizer) on PATH;
# - exports XDG_RUNTIME_DIR (a fresh directory), ORRERY_KERNEL_CACHE (compiled kernels in
#   /tmp/orrery-kernels) and ORRERY_COMMIT (the bundle's commit, .device/COMMIT, for the
#   reports).
# Sourcing it again (balltree_check.sh runs balltree.sh) repeats all of it; harmless.
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin
export XDG_RUNTIME_DIR=$(mktemp -d) ORRERY_KERNEL_CACHE=/tmp/orrery-kernels ORRERY_COMMIT=$(cat .device/COMMIT)
