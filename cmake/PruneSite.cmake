# cmake -DHTML=<site/html> -P PruneSite.cmake   (run by the docs target after Doxygen)
#
# Doxygen writes a "Directory Reference" page for every folder that holds one of its input pages
# (build/docs/pages here), even with SHOW_FILES = NO. Nothing links to them and they teach
# nothing, so they are removed; docs.links then proves no page pointed at one.
cmake_minimum_required(VERSION 3.25)
file(GLOB dir_pages "${HTML}/dir_*.html" "${HTML}/dir_*.map" "${HTML}/dir_*.md5" "${HTML}/dir_*.svg" "${HTML}/dir_*.js")
if(dir_pages)
  file(REMOVE ${dir_pages})
endif()
