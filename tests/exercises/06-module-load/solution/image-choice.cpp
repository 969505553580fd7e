// Reference solution of lesson 06's exercise image-choice (lessons/06-module-load/exercises.cpp).
#include "exercises.hpp"

namespace ex06 {

// Machine code runs only on its own major version, from its minor version up; PTX is compiled for
// any device at least as new as its architecture. Machine code needs no compile, so it comes first;
// within each kind the newest architecture that fits is the best match. The loop takes each image
// by reference, so the pointer returned is the caller's element, not a copy that dies with the loop.
const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch <= deviceArch && (!bestPtx || image.arch > bestPtx->arch)) bestPtx = &image;
    } else {
      const bool runs = image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10;
      if (runs && (!bestCubin || image.arch > bestCubin->arch)) bestCubin = &image;
    }
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
