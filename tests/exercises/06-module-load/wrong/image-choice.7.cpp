// Wrong (R5): when nothing runs, returns the oldest PTX anyway, "the driver can compile PTX for any device"
//
// PTX is compiled at load, but only for devices at least as new as its architecture: compute_80 on
// a 7.5 device is refused by the driver, and the plugin should have been told that nothing fits.
// For a 7.5 device with sm_80 and compute_80 it answers compute_80, and `got == expected` fails.
#include "exercises.hpp"

namespace ex06 {

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
  if (bestCubin) return bestCubin;
  if (bestPtx) return bestPtx;
  for (const Image& image : images)
    if (image.ptx && (!bestPtx || image.arch < bestPtx->arch)) bestPtx = &image;
  return bestPtx;
}

}  // namespace ex06
