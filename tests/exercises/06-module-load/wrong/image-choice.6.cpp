// Wrong (R2): PTX runs only on devices newer than its architecture (< where <= belongs)
//
// An off-by-one in "every device of XY or newer": PTX for the device's own architecture is turned
// down. For an 8.9 device with compute_89 PTX and an sm_90 cubin it answers nothing, and
// `got == expected` fails.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch < deviceArch && (!bestPtx || image.arch > bestPtx->arch)) bestPtx = &image;
    } else {
      const bool runs = image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10;
      if (runs && (!bestCubin || image.arch > bestCubin->arch)) bestCubin = &image;
    }
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
