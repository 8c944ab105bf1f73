"""The intersectional audit (`hinter audit`): every text that describes a person rendered in each sex x
race/ethnicity category, the model asked about each rendering, and the selection rates and impact ratios that NYC
Local Law 144 and the EEOC's four-fifths rule read."""
