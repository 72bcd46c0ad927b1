"""IR -> target lowerings on one pass interface (``passes.py``): ``openvino`` (OpenVINO IR), ``tensorrt``
(TensorRT-ready ONNX + plugin), ``onnx`` (portable ONNX); ``compiled`` builds and loads the shared C++/CUDA
kernels (``kernels/``, ``openvino_ext/``, ``tensorrt_plugin/``, ``cuda/``); ``artifacts`` writes outputs."""
