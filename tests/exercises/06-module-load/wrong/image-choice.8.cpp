// Wrong (R2): PTX runs on every device of its major version or a newer one, whatever the minor
//
// "The driver compiles PTX for the device": but not down to an older minor version, whose
// instruction set compute_86 may use beyond. For an 8.0 device with compute_86 and compute_75 it
// answers compute_86 (the driver would refuse it), and `got == expected` fails.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch / 10 <= deviceArch / 10 && (!bestPtx || image.arch > bestPtx->arch)) bestPtx = &image;
    } else {
      const bool runs = image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10;
      if (runs && (!bestCubin || image.arch > bestCubin->arch)) bestCubin = &image;
    }
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
