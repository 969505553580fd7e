// Wrong (R1): "a newer GPU runs older code": any cubin not newer than the device, PTX only when none is
//
// That holds for PTX but not for machine code of another major version: for a 9.0 device with sm_75,
// sm_80 and sm_86 cubins it picks sm_86 where only the PTX runs (`got == expected` fails), and on
// this GPU, without a cubin of its major version, `fallback->ptx` fails and the cubin it picked does
// not load.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.arch > deviceArch) continue;
    const Image*& best = image.ptx ? bestPtx : bestCubin;
    if (!best || image.arch > best->arch) best = &image;
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
