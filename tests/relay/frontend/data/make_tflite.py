"""Make ``small_cnn.tflite`` and the TFLite interpreter's outputs on a fixed input.

Run once, in a side environment with TensorFlow (not a dependency of the package)::

    python -m venv /tmp/tfl && /tmp/tfl/bin/pip install tensorflow-cpu
    /tmp/tfl/bin/python tests/relay/frontend/data/make_tflite.py

It writes ``small_cnn.tflite`` (a float32 conv-relu-pool-dense net, NHWC 1x8x8x3) and
``small_cnn_io.npz`` (``input``, ``output``: the interpreter's result) next to itself.
"""

from pathlib import Path

import numpy as np
import tensorflow as tf

HERE = Path(__file__).parent


def main() -> None:
    tf.random.set_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8, 8, 3), batch_size=1, name="input"),
            tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling2D(2),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(5),
        ]
    )
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    flatbuffer = converter.convert()
    (HERE / "small_cnn.tflite").write_bytes(flatbuffer)
    interpreter = tf.lite.Interpreter(model_content=flatbuffer)
    interpreter.allocate_tensors()
    (inp,) = interpreter.get_input_details()
    (out,) = interpreter.get_output_details()
    data = np.random.default_rng(0).standard_normal((1, 8, 8, 3)).astype("float32")
    interpreter.set_tensor(inp["index"], data)
    interpreter.invoke()
    result = interpreter.get_tensor(out["index"])
    np.savez(HERE / "small_cnn_io.npz", input=data, output=result, input_name=inp["name"])
    print(inp["name"], inp["shape"], out["shape"], len(flatbuffer), "bytes")


if __name__ == "__main__":
    main()
