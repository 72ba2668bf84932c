//! KFD topology and its sysfs tree (to be written).
