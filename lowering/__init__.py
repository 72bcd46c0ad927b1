"""IR -> framework lowerings (planned: openvino, tensorrt, decomposition, kernels)."""
