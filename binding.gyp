{
  "targets": [
    {
      "target_name": "fast_response",
      "sources": ["src/addon.cc", "src/head.cc", "src/message.cc", "src/writer.cc",
                  "src/socket_write.cc", "src/utf8.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions", "-O2"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++1y", "-std=gnu++17", "-O2"],
      "cflags_cc": ["-std=c++17", "-O3", "-fno-exceptions", "-Wall", "-Wextra"],
      "conditions": [
        ["OS=='mac'", {
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "GCC_OPTIMIZATION_LEVEL": "3"
          }
        }]
      ]
    }
  ]
}
