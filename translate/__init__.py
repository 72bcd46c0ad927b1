"""Framework -> IR. One module per framework; optional frameworks (openvino, tensorrt) are imported lazily."""
