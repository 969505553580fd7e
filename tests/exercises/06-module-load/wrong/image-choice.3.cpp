// Wrong (R1): a cubin runs on every device of its major version, whatever the minor
//
// "Same major, same instruction set." A cubin for a newer minor version uses what the older minor
// lacks, and the driver refuses it: for an 8.6 device with sm_89 and sm_80 cubins it picks sm_89,
// and `got == expected` fails.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch <= deviceArch && (!bestPtx || image.arch > bestPtx->arch)) bestPtx = &image;
    } else {
      const bool runs = image.arch / 10 == deviceArch / 10;
      if (runs && (!bestCubin || image.arch > bestCubin->arch)) bestCubin = &image;
    }
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
